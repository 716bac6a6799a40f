# Consul ACL policy of the harvest task driver on every harvested client:
# it appends its node's samples to the tenant history (cpu/ and tenants/),
# writes the node's busy flag (busy/), and reads the declarations (its
# tenant's reserve, the placer's policy). Nothing else; in particular not the
# blob tier's catalogue or the placer's class table.
key_prefix "${prefix}cpu/" {
  policy = "write"
}

key_prefix "${prefix}tenants/" {
  policy = "write"
}

key_prefix "${prefix}busy/" {
  policy = "write"
}

key_prefix "${prefix}declarations/" {
  policy = "read"
}
