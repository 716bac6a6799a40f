# one policy per cluster
terraform import harvest_placer_policy.this policy
