name                 = "client-2"
region               = "global"
datacenter           = "dc1"
data_dir             = "/run/nomad-client-2/data"
bind_addr            = "127.0.0.1"
disable_update_check = true
log_level            = "INFO"

ports {
  http = 15153
  rpc  = 15154
  serf = 15155
}

advertise {
  http = "127.0.0.1:15153"
  rpc  = "127.0.0.1:15154"
  serf = "127.0.0.1:15155"
}

# Every client of this cluster (tests, CLIs, the placer, the agents) comes
# from 127.0.0.1: the per-IP connection limit would throttle them as one.
limits {
  http_max_conns_per_client = 0
  rpc_max_conns_per_client  = 0
}
plugin_dir           = "/run/plugins"

client {
  enabled           = true
  servers           = ["127.0.0.1:15141"]
  cgroup_parent     = "/harvest-15100-client-2"
  network_interface = "lo"
  min_dynamic_port  = 20192
  max_dynamic_port  = 20215

  meta {
    harvest_environment = "ads"
    harvest_rack = "rack-2"
    harvest_tenant = "ads/indexer"
  }

  options {
    "fingerprint.denylist" = "env_aws,env_gce,env_azure,env_digitalocean"
    "driver.denylist"      = "docker,podman,java,qemu,mock_driver"
  }
}

plugin "raw_exec" {
  config {
    enabled = true
  }
}

plugin "harvest-driver" {
  config {
    enabled             = true
    usage_source        = "cgroup"
    primary_cgroup      = "/harvest-15100-client-2-primary"
    capacity_cpu        = 2
    capacity_memory     = 4096
    reserve_cpu         = "0.5"
    reserve_memory      = "512"
    admit_window        = "5s"
    admit_margin_cpu    = 0.25
    admit_margin_memory = 128
    tenant              = "ads/indexer"
    node_name           = "client-2"
    consul_address      = "127.0.0.1:15014"
    metrics_address     = "127.0.0.1:15180"
    harvest_cgroup      = "/harvest-15100-client-2-harvested"
    plugin_config       = "/run/nomad-client-2/usage-plugins.hcl"
    usage_plugin        = "exporter"
  }
}

consul {
  address          = "127.0.0.1:15014"
  server_auto_join = false
  client_auto_join = false
}
