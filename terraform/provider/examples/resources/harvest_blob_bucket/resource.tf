resource "harvest_blob_bucket" "datasets" {
  name      = "datasets"
  replicas  = 3
  diversity = "strict"
}
