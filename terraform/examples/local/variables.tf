variable "repo_root" {
  type        = string
  default     = ""
  description = "The Harvest checkout (default: three folders up from this example)."
}

variable "nomad_address" {
  type        = string
  description = "The local cluster's Nomad API (NOMAD_ADDR in .run/cluster/env.sh)."
}

variable "consul_address" {
  type        = string
  description = "The local cluster's Consul API (CONSUL_HTTP_ADDR in .run/cluster/env.sh)."
}

variable "consul_prefix" {
  type        = string
  default     = "harvest/"
  description = "Consul KV prefix of Harvest's state."
}

variable "storage_data_root" {
  type        = string
  default     = ""
  description = "Storage nodes' folder (default: .run/terraform-storage in the repository)."
}

variable "ports" {
  type = object({
    placer_http  = optional(number, 4650)
    placer_proxy = optional(number, 4656)
    blob_s3      = optional(number, 9100)
    blob_admin   = optional(number, 9101)
  })
  default     = {}
  description = "Static ports of the platform's services."
}

variable "blob_access_key" {
  type    = string
  default = "harvest-local"
}

variable "blob_secret_key" {
  type      = string
  default   = "harvest-local-secret"
  sensitive = true
}

variable "storage_secret_key" {
  type      = string
  default   = "harvest-storage-secret"
  sensitive = true
}

variable "placer_token" {
  type        = string
  sensitive   = true
  description = "Token the placer's API accepts for changes (at least 16 characters; e.g. uuidgen)."
}
