# Where the platform's binaries and data live on every Nomad client.

variable "harvest_bin_dir" {
  type        = string
  description = "Folder holding harvest-placer and harvest-blob on every client."
}

variable "minio_path" {
  type        = string
  description = "The MinIO server binary on every client."
}

variable "storage_data_root" {
  type        = string
  description = "Host folder of the storage nodes (each keeps <root>/<node name>)."
}

variable "datacenters" {
  type        = list(string)
  default     = ["dc1"]
  description = "Nomad datacenters the platform runs in."
}

# How the platform's tasks reach Nomad and Consul.

variable "nomad_address" {
  type        = string
  description = "Nomad HTTP API as the placer task reaches it."
}

variable "consul_address" {
  type        = string
  description = "Consul HTTP API as the placer and front tasks reach it."
}

variable "consul_prefix" {
  type        = string
  default     = "harvest/"
  description = "Consul KV prefix of Harvest's state."
}

# Sizes and ports.

variable "storage_capacity_mb" {
  type        = number
  default     = 10240
  description = "Harvestable storage each storage node offers, in MiB."
}

variable "storage_memory_mb" {
  type        = number
  default     = 512
  description = "Memory of each storage node's MinIO, in MiB."
}

variable "ports" {
  type = object({
    placer_http  = optional(number, 4650)
    placer_proxy = optional(number, 4656)
    blob_s3      = optional(number, 9100)
    blob_admin   = optional(number, 9101)
  })
  default     = {}
  description = "Static ports of the placer's API, the admission proxy, and the blob front's S3 and admin APIs."
}

variable "placer_extra_config" {
  type        = string
  default     = ""
  description = "More placer HCL (packing, partition, greylist, escalation blocks)."
}

variable "health_timeout" {
  type        = string
  default     = "5m"
  description = "How long to wait for every instance to pass its Consul checks."
}

# Credentials (kept in Nomad variables, never in the job files).

variable "blob_credentials" {
  type = object({
    access_key = string
    secret_key = string
  })
  sensitive   = true
  description = "S3 credentials clients use with the blob front."
}

variable "placer_token" {
  type        = string
  sensitive   = true
  description = "Token the placer's API accepts for changes (at least 16 characters); the harvest provider's placer_token must be the same."
}

variable "blob_admin_token" {
  type        = string
  default     = ""
  sensitive   = true
  description = "Token of the blob front's admin API POSTs (scrub, gc, safe-mode confirm); empty: refused."
}

variable "storage_credentials" {
  type = object({
    access_key = string
    secret_key = string
  })
  sensitive   = true
  description = "Credentials of the storage nodes' MinIO servers (only the front uses them; secret at least 8 characters)."
}

# What runs on the platform.

variable "policy" {
  type = object({
    periodic_strength = optional(number)
    constant_sd       = optional(number)
    class_spread      = optional(number)
    max_classes       = optional(number)
    weights           = optional(map(map(number)))
    reserve_cpu       = optional(number)
    reserve_memory_mb = optional(number)
    replicas          = optional(number, 3)
    diversity         = optional(string)
  })
  default     = null
  description = "The placer policy (null: the placer's configuration file decides). replicas is also the front's default."
}

variable "tenants" {
  type = map(object({
    storage_mb        = optional(number)
    reserve_cpu       = optional(number)
    reserve_memory_mb = optional(number)
  }))
  default     = {}
  description = "Primary tenants by id (environment/function) and what each declares."
}

variable "buckets" {
  type = map(object({
    replicas      = optional(number)
    diversity     = optional(string)
    force_destroy = optional(bool, false)
  }))
  default     = {}
  description = "Blob buckets by name and their replication policy."
}

# A cluster with ACLs and TLS.

variable "acl" {
  type        = bool
  default     = false
  description = "Give the platform Harvest's least-privilege ACL policies (acl/): the cluster runs Consul and Nomad ACLs and Consul accepts Nomad's workload identities."
}

variable "namespace" {
  type        = string
  default     = "default"
  description = "Nomad namespace of the platform's jobs; with acl, one of their own (its tasks' Consul roles are bound by it)."
}

variable "harvested_namespace" {
  type        = string
  default     = "default"
  description = "Nomad namespace harvested jobs run in: the placer's own token may register stage jobs there only."
}

variable "tls" {
  type = object({
    nomad_ca_file  = optional(string, "")
    consul_ca_file = optional(string, "")
    cert_file      = optional(string, "")
    key_file       = optional(string, "")
  })
  default     = {}
  description = "Paths on every client: the CAs the platform verifies Nomad and Consul with, and the certificate and key the placer and the front serve HTTPS with."
}
