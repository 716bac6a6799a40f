# The placer: learns each primary tenant's utilisation pattern from its
# history (kept in Consul KV), labels Nomad nodes with their class, and runs
# the admission proxy users point NOMAD_ADDR at. One instance per cluster:
# its state is all in Consul, so Nomad may move it anywhere.
#
# Its HTTP API (/v1/health, /v1/classes, /v1/metrics, ...) and the proxy
# listen on static ports so that users, Terraform and other services can
# find them; both are registered in Consul and health-checked.
#
# Every change through its API needs a token: a Nomad ACL token with the
# Harvest capability, or the placer's own token, kept in a Nomad variable
# (never in this file):
#
#   nomad var put nomad/jobs/harvest-placer api_token=$(uuidgen)
#
# On a cluster with ACLs the placer acts with its workload identity (the
# task's identity block sets NOMAD_TOKEN): attach jobs/acl/placer.nomad.hcl to
# the job (`nomad acl policy apply -namespace <ns> -job harvest-placer
# harvest-placer placer.nomad.hcl`); its Consul token comes from the task's
# consul block (the role the platform's binding rule gives harvest-placer,
# with jobs/acl/placer.consul.hcl). With nomad_ca_file and consul_ca_file it
# verifies Nomad's and Consul's certificates; with tls_cert_file and
# tls_key_file its API and proxy speak HTTPS.

variable "datacenters" {
  type        = list(string)
  default     = ["dc1"]
  description = "datacenters the placer may run in"
}

variable "harvest_bin_dir" {
  type        = string
  default     = "/usr/local/bin"
  description = "folder holding harvest-placer on every client (nothing is downloaded at run time)"
}

variable "nomad_address" {
  type        = string
  default     = "http://127.0.0.1:4646"
  description = "Nomad HTTP API the placer labels nodes and forwards jobs through"
}

variable "consul_address" {
  type        = string
  default     = "127.0.0.1:8500"
  description = "Consul HTTP API holding the tenant history and class table"
}

variable "consul_prefix" {
  type        = string
  default     = "harvest/"
  description = "Consul KV prefix of Harvest's state"
}

variable "http_port" {
  type        = number
  default     = 4650
  description = "static port of the placer's HTTP API"
}

variable "proxy_port" {
  type        = number
  default     = 4656
  description = "static port of the admission proxy (NOMAD_ADDR for users)"
}

variable "classify_interval" {
  type        = string
  default     = "24h"
  description = "how often tenants are re-classified"
}

variable "extra_config" {
  type        = string
  default     = ""
  description = "more placer HCL (packing, partition, greylist, escalation blocks), appended to the config"
}

variable "namespace" {
  type        = string
  default     = "default"
  description = "Nomad namespace of the platform's jobs"
}

variable "nomad_ca_file" {
  type        = string
  default     = ""
  description = "CA bundle (a path on every client) to verify Nomad's certificate"
}

variable "consul_ca_file" {
  type        = string
  default     = ""
  description = "CA bundle (a path on every client) to verify Consul's certificate"
}

variable "tls_cert_file" {
  type        = string
  default     = ""
  description = "certificate (a path on every client) the API and the proxy serve HTTPS with; empty: plain HTTP"
}

variable "tls_key_file" {
  type        = string
  default     = ""
  description = "its key"
}

job "harvest-placer" {
  type        = "service"
  datacenters = var.datacenters
  namespace   = var.namespace

  group "placer" {
    count = 1

    network {
      port "http" {
        static = var.http_port
      }
      port "proxy" {
        static = var.proxy_port
      }
    }

    service {
      name     = "harvest-placer"
      port     = "http"
      provider = "consul"
      tags     = ["harvest", "api"]
      check {
        name            = "placer api"
        type            = "http"
        protocol        = var.tls_cert_file != "" ? "https" : "http"
        tls_skip_verify = true # a liveness probe on the node itself
        path            = "/v1/health"
        interval        = "5s"
        timeout         = "2s"
      }
    }

    service {
      name     = "harvest-placer-proxy"
      port     = "proxy"
      provider = "consul"
      tags     = ["harvest", "nomad-proxy"]
      check {
        name     = "proxy listening"
        type     = "tcp"
        interval = "5s"
        timeout  = "2s"
      }
    }

    restart {
      attempts = 10
      interval = "5m"
      delay    = "5s"
      mode     = "delay"
    }

    task "placer" {
      driver = "raw_exec"

      # its own Nomad token: the workload identity (NOMAD_TOKEN), with the
      # ACL policy attached to this job
      identity {
        env = true
      }

      # its Consul token from the workload identity (CONSUL_HTTP_TOKEN)
      consul {}

      config {
        command = "${var.harvest_bin_dir}/harvest-placer"
        args    = ["agent", "-config", "${NOMAD_SECRETS_DIR}/placer.hcl"]
      }

      template {
        destination = "secrets/placer.hcl"
        change_mode = "restart"
        data        = <<-EOT
        http_addr = "{{ env "NOMAD_ADDR_http" }}"
        %{ if var.tls_cert_file != "" }
        tls {
          cert_file = ${jsonencode(var.tls_cert_file)}
          key_file  = ${jsonencode(var.tls_key_file)}
        }
        %{ endif }
        nomad {
          address = ${jsonencode(var.nomad_address)}
          %{ if var.nomad_ca_file != "" }ca_file = ${jsonencode(var.nomad_ca_file)}%{ endif }
        }
        consul {
          address = ${jsonencode(var.consul_address)}
          prefix  = ${jsonencode(var.consul_prefix)}
          %{ if var.consul_ca_file != "" }ca_file = ${jsonencode(var.consul_ca_file)}%{ endif }
        }
        classify {
          interval = ${jsonencode(var.classify_interval)}
        }
        proxy {
          address = "{{ env "NOMAD_ADDR_proxy" }}"
          %{ if var.tls_cert_file != "" }
          tls_cert_file = ${jsonencode(var.tls_cert_file)}
          tls_key_file  = ${jsonencode(var.tls_key_file)}
          %{ endif }
        }
        acl {
          {{ with nomadVar "nomad/jobs/harvest-placer" }}
          tokens = [{{ .api_token | toJSON }}]
          {{ end }}
        }
        ${var.extra_config}
        EOT
      }

      resources {
        cpu    = 200
        memory = 256
      }
    }
  }
}
