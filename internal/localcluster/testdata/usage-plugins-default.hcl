plugin_dir = "/run/usage-plugins"

usage_source "exporter" {
  driver       = "harvest-usage-prometheus"
  call_timeout = "2s"
  config = {
    url                   = "http://127.0.0.1:15090/metrics"
    primary_cpu_metric    = "container_cpu_usage_seconds_total"
    primary_memory_metric = "container_memory_usage_bytes"
    primary_labels        = "id=/harvest-15100-client-2-primary"
    capacity_cpu_cores    = "2"
    capacity_memory_bytes = "4294967296"
  }
}
