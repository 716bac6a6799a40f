provider "harvest" {
  nomad_address      = "http://127.0.0.1:4646"
  consul_address     = "127.0.0.1:8500"
  placer_address     = "http://127.0.0.1:4650"
  blob_endpoint      = "127.0.0.1:9100"
  blob_admin_address = "http://127.0.0.1:9101"
  blob_access_key    = var.blob_access_key
  blob_secret_key    = var.blob_secret_key
}
