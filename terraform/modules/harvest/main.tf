# Harvest on a Nomad + Consul cluster: the platform's jobs first, then the
# placer policy, the tenant declarations and the buckets, which need the
# placer and the blob front running.

# On a cluster with ACLs the platform gets Harvest's least-privilege
# policies (acl/, the same files as jobs/acl): the placer's Nomad policy on
# its job's workload identity, the placer's and the front's Consul policies
# as roles their tasks log in to with their workload identities.
locals {
  acl_vars = { prefix = var.consul_prefix, namespace = var.harvested_namespace }
  acl_policies = var.acl ? {
    for name in ["placer.nomad", "placer.consul", "blob.consul"] :
    name => templatefile("${path.module}/acl/${name}.hcl", local.acl_vars)
  } : null
}

resource "harvest_platform" "this" {
  datacenters         = var.datacenters
  harvest_bin_dir     = var.harvest_bin_dir
  minio_path          = var.minio_path
  storage_data_root   = var.storage_data_root
  storage_capacity_mb = var.storage_capacity_mb
  storage_memory_mb   = var.storage_memory_mb
  nomad_address       = var.nomad_address
  consul_address      = var.consul_address
  consul_prefix       = var.consul_prefix
  placer_http_port    = var.ports.placer_http
  placer_proxy_port   = var.ports.placer_proxy
  placer_extra_config = var.placer_extra_config
  blob_s3_port        = var.ports.blob_s3
  blob_admin_port     = var.ports.blob_admin
  replicas            = try(var.policy.replicas, 3)
  blob_access_key     = var.blob_credentials.access_key
  blob_secret_key     = var.blob_credentials.secret_key
  storage_access_key  = var.storage_credentials.access_key
  storage_secret_key  = var.storage_credentials.secret_key
  placer_token        = var.placer_token
  blob_admin_token    = var.blob_admin_token
  health_timeout      = var.health_timeout
  namespace           = var.namespace
  nomad_ca_file       = var.tls.nomad_ca_file
  consul_ca_file      = var.tls.consul_ca_file
  tls_cert_file       = var.tls.cert_file
  tls_key_file        = var.tls.key_file
  acl_policies        = local.acl_policies
}

resource "harvest_placer_policy" "this" {
  count = var.policy == null ? 0 : 1

  periodic_strength = var.policy.periodic_strength
  constant_sd       = var.policy.constant_sd
  class_spread      = var.policy.class_spread
  max_classes       = var.policy.max_classes
  weights           = var.policy.weights
  reserve_cpu       = var.policy.reserve_cpu
  reserve_memory_mb = var.policy.reserve_memory_mb
  replicas          = var.policy.replicas
  diversity         = var.policy.diversity

  depends_on = [harvest_platform.this]
}

resource "harvest_tenant" "this" {
  for_each = var.tenants

  environment       = split("/", each.key)[0]
  function          = split("/", each.key)[1]
  storage_mb        = each.value.storage_mb
  reserve_cpu       = each.value.reserve_cpu
  reserve_memory_mb = each.value.reserve_memory_mb

  depends_on = [harvest_platform.this]
}

resource "harvest_blob_bucket" "this" {
  for_each = var.buckets

  name          = each.key
  replicas      = each.value.replicas
  diversity     = each.value.diversity
  force_destroy = each.value.force_destroy

  depends_on = [harvest_platform.this]
}
