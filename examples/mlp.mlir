// A two-layer MLP classifier as the ONNX frontend will import it: the batch
// is pinned through the argument type (1 here); every intermediate type is
// still unknown, and the flatten goes through an exporter-style shape
// subgraph. `scripts/run-example.sh` infers every shape and folds the
// subgraph away.
func.func @mlp(%x: tensor<1x1x28x28xf32>, %w1: tensor<784x128xf32>,
               %b1: tensor<128xf32>, %w2: tensor<128x10xf32>,
               %b2: tensor<10xf32>) -> tensor<?x?xf32> {
  %shape = kiln.shape_of %x : tensor<1x1x28x28xf32> -> tensor<4xi64>
  %zero = kiln.constant dense<0> : tensor<1xi64>
  %batch = kiln.gather %shape[%zero] axis = 0 : (tensor<4xi64>, tensor<1xi64>) -> tensor<1xi64>
  %rest = kiln.constant dense<-1> : tensor<1xi64>
  %target = kiln.concat %batch, %rest axis = 0 : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
  %flat = kiln.reshape %x by %target : tensor<1x1x28x28xf32>, tensor<2xi64> -> tensor<?x?xf32>
  %h = kiln.matmul %flat, %w1 : (tensor<?x?xf32>, tensor<784x128xf32>) -> tensor<?x?xf32>
  %hb = kiln.add %h, %b1 : (tensor<?x?xf32>, tensor<128xf32>) -> tensor<?x?xf32>
  %a = kiln.gelu %hb approximation = tanh : tensor<?x?xf32> -> tensor<?x?xf32>
  %o = kiln.matmul %a, %w2 : (tensor<?x?xf32>, tensor<128x10xf32>) -> tensor<?x?xf32>
  %ob = kiln.add %o, %b2 : (tensor<?x?xf32>, tensor<10xf32>) -> tensor<?x?xf32>
  %p = kiln.softmax %ob axis = -1 : tensor<?x?xf32> -> tensor<?x?xf32>
  return %p : tensor<?x?xf32>
}
