# The blob front: serves the harvested datasets to ordinary S3 clients,
# placing each object's replicas on the storage nodes (harvest-storage) by
# the 3x3 diversity grid and repairing them after reimages.
#
# Its node list comes from Consul: every harvest-storage instance, healthy or
# not (a node failing its check is the front's to judge: it keeps the node
# and reads around it; only a node whose allocation is gone leaves the list).
# When the list changes, Nomad re-renders the file and sends SIGHUP: the
# front takes the new node list without a restart (a node that left is kept
# down and, after lost_after, its replicas are re-created elsewhere; other
# settings, the keys included, take effect at the next start: nomad alloc
# restart). Credentials come from the
# Nomad variable nomad/jobs/harvest-blob, never from this file:
#
#   nomad var put nomad/jobs/harvest-blob access_key=... secret_key=... admin_token=... \
#     client_1_access_key=... client_1_secret_key=... ...
#
# (the <node>_* pairs are the ones each of harvest-storage's MinIO servers
# runs with, node names with '-' and '.' as '_'; admin_token, when not
# empty, is what POST /v1/scrub, /v1/gc and /v1/safe-mode/confirm of the
# admin API want). With consul_ca_file the front reaches Consul over TLS;
# its Consul token comes from its workload identity (the task's consul
# block: Nomad logs it in to Consul and sets CONSUL_HTTP_TOKEN). With
# tls_cert_file and tls_key_file its S3 and admin listeners speak HTTPS.
#
# With fronts > 1 every front serves the same buckets (S3 clients find them
# all under the harvest-blob service); the Consul session lock
# <prefix>blob/maintainer makes one of them the maintainer (repairs, scrubs,
# garbage collection, forgetting lost nodes) and the others stand by.

variable "datacenters" {
  type        = list(string)
  default     = ["dc1"]
  description = "datacenters the front may run in"
}

variable "harvest_bin_dir" {
  type        = string
  default     = "/usr/local/bin"
  description = "folder holding harvest-blob on every client (nothing is downloaded at run time)"
}

variable "consul_address" {
  type        = string
  default     = "127.0.0.1:8500"
  description = "Consul HTTP API holding the catalogue and the tenant history"
}

variable "consul_prefix" {
  type        = string
  default     = "harvest/"
  description = "Consul KV prefix of Harvest's state"
}

variable "s3_port" {
  type        = number
  default     = 9100
  description = "static port S3 clients use"
}

variable "admin_port" {
  type        = number
  default     = 9101
  description = "static port of /v1/status, /v1/health and /v1/metrics"
}

variable "fronts" {
  type        = number
  default     = 1
  description = "fronts serving the same buckets, one per client (static ports); one at a time maintains the tier (the maintainer lock)"
}

variable "replicas" {
  type        = number
  default     = 3
  description = "replicas of an object whose bucket does not say (bucket tag harvest-replicas)"
}

variable "repair_per_server_per_hour" {
  type        = number
  default     = 30
  description = "repairs each receiving storage node takes per hour"
}

variable "lost_after" {
  type        = string
  default     = "10m"
  description = "how long a storage node may be unreachable before its replicas are re-created elsewhere"
}

variable "namespace" {
  type        = string
  default     = "default"
  description = "Nomad namespace of the platform's jobs"
}

variable "consul_ca_file" {
  type        = string
  default     = ""
  description = "CA bundle (a path on every client) to verify Consul's certificate; empty: the consul_address's scheme decides"
}

variable "tls_cert_file" {
  type        = string
  default     = ""
  description = "certificate (a path on every client) the S3 and admin listeners serve HTTPS with; empty: plain HTTP"
}

variable "tls_key_file" {
  type        = string
  default     = ""
  description = "its key"
}

job "harvest-blob" {
  type        = "service"
  datacenters = var.datacenters
  namespace   = var.namespace

  group "front" {
    count = var.fronts

    network {
      port "s3" {
        static = var.s3_port
      }
      port "admin" {
        static = var.admin_port
      }
    }

    service {
      name     = "harvest-blob"
      port     = "s3"
      provider = "consul"
      tags     = ["harvest", "s3"]
      check {
        name     = "s3 listening"
        type     = "tcp"
        interval = "5s"
        timeout  = "2s"
      }
    }

    service {
      name     = "harvest-blob-admin"
      port     = "admin"
      provider = "consul"
      tags     = ["harvest", "api"]
      check {
        name            = "blob health"
        type            = "http"
        protocol        = var.tls_cert_file != "" ? "https" : "http"
        tls_skip_verify = true # a liveness probe on the node itself
        path            = "/v1/health"
        interval        = "5s"
        timeout         = "2s"
      }
    }

    restart {
      attempts = 10
      interval = "5m"
      delay    = "5s"
      mode     = "delay"
    }

    task "front" {
      driver = "raw_exec"

      # a Consul token from the task's workload identity (CONSUL_HTTP_TOKEN):
      # the role the platform's binding rule gives harvest-blob (blob.consul)
      consul {}

      config {
        command = "${var.harvest_bin_dir}/harvest-blob"
        args    = ["agent", "-config", "${NOMAD_SECRETS_DIR}/blob.hcl"]
      }

      template {
        destination   = "secrets/blob.hcl"
        change_mode   = "signal"
        change_signal = "SIGHUP"
        splay       = "5s"
        data        = <<-EOT
        listen       = "{{ env "NOMAD_ADDR_s3" }}"
        admin_listen = "{{ env "NOMAD_ADDR_admin" }}"
        replicas     = ${var.replicas}
        consul {
          address = ${jsonencode(var.consul_address)}
          prefix  = ${jsonencode(var.consul_prefix)}
          %{ if var.consul_ca_file != "" }ca_file = ${jsonencode(var.consul_ca_file)}%{ endif }
        }
        %{ if var.tls_cert_file != "" }
        tls {
          cert_file = ${jsonencode(var.tls_cert_file)}
          key_file  = ${jsonencode(var.tls_key_file)}
        }
        admin_tls {
          cert_file = ${jsonencode(var.tls_cert_file)}
          key_file  = ${jsonencode(var.tls_key_file)}
        }
        %{ endif }
        repair {
          per_server_per_hour = ${var.repair_per_server_per_hour}
          lost_after          = ${jsonencode(var.lost_after)}
        }
        {{ with nomadVar "nomad/jobs/harvest-blob" }}
        access_key = {{ .access_key | toJSON }}
        secret_key = {{ .secret_key | toJSON }}
        {{ with .admin_token }}{{ if ne (print .) "" }}admin_tokens = [{{ print . | toJSON }}]{{ end }}{{ end }}
        {{ $storage := . }}
        {{ range service "harvest-storage|any" }}
        {{ $key := .ServiceMeta.node | replaceAll "-" "_" | replaceAll "." "_" }}
        node {{ .ServiceMeta.node | toJSON }} {
          endpoint    = "{{ .Address }}:{{ .Port }}"
          access_key  = {{ print (index $storage (printf "%s_access_key" $key)) | toJSON }}
          secret_key  = {{ print (index $storage (printf "%s_secret_key" $key)) | toJSON }}
          tenant      = {{ .ServiceMeta.tenant | toJSON }}
          environment = {{ .ServiceMeta.environment | toJSON }}
          rack        = {{ .ServiceMeta.rack | toJSON }}
          capacity_mb = {{ .ServiceMeta.capacity_mb }}
        }
        {{ end }}
        {{ end }}
        EOT
      }

      resources {
        cpu    = 300
        memory = 512
      }
    }
  }
}
