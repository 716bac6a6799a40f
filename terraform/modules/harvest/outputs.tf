output "platform_id" {
  value       = harvest_platform.this.id
  description = "The deployment's id (import id of harvest_platform)."
}

output "jobs" {
  value       = ["harvest-storage", "harvest-blob", "harvest-placer"]
  description = "The Nomad jobs the module registered."
  depends_on  = [harvest_platform.this]
}

output "ports" {
  value = {
    placer_http  = harvest_platform.this.placer_http_port
    placer_proxy = harvest_platform.this.placer_proxy_port
    blob_s3      = harvest_platform.this.blob_s3_port
    blob_admin   = harvest_platform.this.blob_admin_port
  }
  description = "Static ports of the placer's API, the admission proxy (users' NOMAD_ADDR) and the blob front."
}

output "tenants" {
  value       = sort(keys(harvest_tenant.this))
  description = "Declared tenants."
}

output "buckets" {
  value       = sort([for b in harvest_blob_bucket.this : b.name])
  description = "Blob buckets."
}

output "acl_policies" {
  value = {
    for name in ["driver.consul", "operator.nomad", "placer.nomad", "placer.consul", "blob.consul"] :
    name => templatefile("${path.module}/acl/${name}.hcl", local.acl_vars)
  }
  description = "Harvest's policies for this deployment: driver.consul for every harvest driver's Consul token (plugin config consul_token), operator.nomad for people and tools that change the placer, and the platform's own."
}
