# Consul ACL policy of the blob front (harvest-blob): its catalogue, node
# registry, uploads and buckets under <prefix>blob/, read access to the rest of
# Harvest's state (tenant history for placement, declarations, busy flags),
# sessions for the maintainer lock, and the storage nodes' service to
# discover them.
key_prefix "${prefix}" {
  policy = "read"
}

key_prefix "${prefix}blob/" {
  policy = "write"
}

session_prefix "" {
  policy = "write"
}

service "harvest-storage" {
  policy = "read"
}

node_prefix "" {
  policy = "read"
}
