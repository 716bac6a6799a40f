resource "harvest_platform" "this" {
  harvest_bin_dir   = "/usr/local/bin"
  minio_path        = "/usr/local/bin/minio"
  storage_data_root = "/srv/harvest/storage"
  nomad_address     = "http://127.0.0.1:4646"
  consul_address    = "127.0.0.1:8500"

  storage_capacity_mb = 102400
  replicas            = 3

  blob_access_key    = var.blob_access_key
  blob_secret_key    = var.blob_secret_key
  storage_access_key = var.storage_access_key
  storage_secret_key = var.storage_secret_key
}
