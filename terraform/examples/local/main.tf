# Harvest on the local cluster of `make cluster-up` (every process on
# 127.0.0.1). See docs/provisioning.md for the commands.

terraform {
  required_version = ">= 1.5.0"

  required_providers {
    harvest = {
      source  = "harvest-platform/harvest"
      version = "0.1.0"
    }
  }
}

locals {
  # the Harvest checkout whose bin/ and .cache/stack/ the cluster runs from
  repo_root = var.repo_root != "" ? var.repo_root : abspath("${path.root}/../../..")
}

provider "harvest" {
  nomad_address      = var.nomad_address
  consul_address     = var.consul_address
  placer_address     = "http://127.0.0.1:${var.ports.placer_http}"
  placer_token       = var.placer_token
  blob_endpoint      = "127.0.0.1:${var.ports.blob_s3}"
  blob_admin_address = "http://127.0.0.1:${var.ports.blob_admin}"
  blob_access_key    = var.blob_access_key
  blob_secret_key    = var.blob_secret_key
}

module "harvest" {
  source = "../../modules/harvest"

  harvest_bin_dir     = "${local.repo_root}/bin"
  minio_path          = "${local.repo_root}/.cache/stack/bin/minio"
  storage_data_root   = var.storage_data_root != "" ? var.storage_data_root : "${local.repo_root}/.run/terraform-storage"
  storage_capacity_mb = 2048
  storage_memory_mb   = 300
  nomad_address       = var.nomad_address
  consul_address      = var.consul_address
  consul_prefix       = var.consul_prefix
  ports               = var.ports
  health_timeout      = "4m"

  blob_credentials    = { access_key = var.blob_access_key, secret_key = var.blob_secret_key }
  storage_credentials = { access_key = "harvest-storage", secret_key = var.storage_secret_key }
  placer_token        = var.placer_token

  policy = {
    replicas  = 2
    diversity = "degraded"
    weights = {
      long = { constant = 3, periodic = 2, unpredictable = 1 }
    }
  }

  tenants = {
    "search/frontend" = { storage_mb = 2048, reserve_cpu = 0.5 }
    "ads/indexer"     = { storage_mb = 1024 }
  }

  buckets = {
    "datasets" = { replicas = 2, force_destroy = true }
  }
}

data "harvest_blob_repair_state" "now" {
  depends_on = [module.harvest]
}
