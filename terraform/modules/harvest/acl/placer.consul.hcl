# Consul ACL policy of the placer: Harvest's state under its KV prefix
# (tenant history, classes, declarations, job history, admissions,
# partition state). Nothing else of Consul.
key_prefix "${prefix}" {
  policy = "write"
}
