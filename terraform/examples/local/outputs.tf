output "placer_api" {
  value = "http://127.0.0.1:${module.harvest.ports.placer_http}"
}

output "nomad_proxy" {
  value       = "http://127.0.0.1:${module.harvest.ports.placer_proxy}"
  description = "Point NOMAD_ADDR here so harvested jobs go through the placer's admission proxy."
}

output "s3_endpoint" {
  value = "http://127.0.0.1:${module.harvest.ports.blob_s3}"
}

output "buckets" {
  value = module.harvest.buckets
}

output "storage_nodes" {
  value       = [for n in data.harvest_blob_repair_state.now.nodes : "${n.id} (${n.tenant}) cell ${n.row},${n.col} up=${n.up}"]
  description = "The blob tier's storage nodes with their diversity-grid cells."
}
