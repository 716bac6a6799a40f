# settings are read back from the jobs' submitted variables, credentials from
# the Nomad variables nomad/jobs/harvest-storage and nomad/jobs/harvest-blob
terraform import harvest_platform.this harvest
