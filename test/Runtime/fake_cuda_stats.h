/*===- fake_cuda_stats.h - what the fake CUDA driver counted --------------===*
 *
 * Shared by fake_cuda_driver.c, which fills it, and runtime_cuda_test.c,
 * which reads it through fake_cuda_stats_get().
 *
 *===----------------------------------------------------------------------===*/

#ifndef KILN_TEST_FAKE_CUDA_STATS_H
#define KILN_TEST_FAKE_CUDA_STATS_H

typedef struct fake_cuda_stats {
  int module_loads_cubin, module_loads_ptx;
  int launches, captured_launches, graph_launches, graphs;
  int param_errors, allocations_live;
  unsigned long long bytes_to_device, bytes_to_host;
  char last_param_error[256];
  /* Work on the stream set by fake_cuda_watch_stream: direct launches,
   * graph launches, events recorded, host synchronizes; and every wait of
   * a stream for an event. */
  int watched_launches, watched_graph_launches, watched_event_records,
      watched_syncs, event_waits;
} fake_cuda_stats;

#endif /* KILN_TEST_FAKE_CUDA_STATS_H */
