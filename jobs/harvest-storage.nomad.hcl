# The blob tier's storage nodes: one MinIO server on every harvested Nomad
# client (a system job), keeping replicas on the harvested part of the
# server's disk. Each registers in Consul as "harvest-storage" with its
# primary tenant, environment, rack and the capacity its owner declared;
# harvest-blob places replicas by those (Algorithm 2) and counts bytes
# against the declared capacity itself (MinIO's quotas are best-effort).
#
# Each MinIO server has credentials of its own, from a Nomad variable (never
# from this file), items named after its node (its name with '-' and '.' as
# '_'):
#   nomad var put nomad/jobs/harvest-storage client_1_access_key=... client_1_secret_key=... ...
# Only this job's tasks can read that variable (Nomad's implicit workload
# policy): no harvested task can. The blob front keeps the same items in its
# own variable, nomad/jobs/harvest-blob, and signs every request to a node
# with that node's keys. A node without items has no MinIO until they are
# written (harvest_platform writes them for every harvested client).
#
# A reimage wipes data_root on the host; harvest-blob notices by the
# identity marker it keeps there and re-creates the replicas elsewhere.

variable "datacenters" {
  type        = list(string)
  default     = ["dc1"]
  description = "datacenters whose harvested clients run a storage node"
}

variable "minio_path" {
  type        = string
  default     = "/usr/local/bin/minio"
  description = "the MinIO server binary on every client (nothing is downloaded at run time)"
}

variable "data_root" {
  type        = string
  default     = "/srv/harvest/storage"
  description = "host folder on the harvested disk; each node keeps its data in <data_root>/<node name>"
}

variable "capacity_mb" {
  type        = number
  default     = 10240
  description = "harvestable storage each node's owner declared, in MiB"
}

variable "driver" {
  type        = string
  default     = "raw_exec"
  description = "task driver that runs MinIO (raw_exec or exec)"
}

variable "memory_mb" {
  type        = number
  default     = 512
  description = "memory of each storage node; MinIO's heap limit and concurrent requests follow from it (below)"
}

variable "namespace" {
  type        = string
  default     = "default"
  description = "Nomad namespace of the platform's jobs"
}

job "harvest-storage" {
  type        = "system"
  datacenters = var.datacenters
  namespace   = var.namespace

  # only servers that offer harvested capacity
  constraint {
    attribute = "${meta.harvest_tenant}"
    operator  = "is_set"
  }

  group "storage" {
    network {
      port "s3" {}
    }

    service {
      name     = "harvest-storage"
      port     = "s3"
      provider = "consul"
      tags     = ["harvest", "s3"]
      meta {
        node        = "${node.unique.name}"
        tenant      = "${meta.harvest_tenant}"
        environment = "${meta.harvest_environment}"
        rack        = "${meta.harvest_rack}"
        capacity_mb = "${var.capacity_mb}"
      }
      check {
        name     = "minio live"
        type     = "http"
        path     = "/minio/health/live"
        interval = "10s"
        timeout  = "2s"
      }
    }

    restart {
      attempts = 10
      interval = "5m"
      delay    = "5s"
      mode     = "delay"
    }

    task "minio" {
      driver = var.driver

      config {
        command = var.minio_path
        args    = ["server", "${var.data_root}/${node.unique.name}", "--address", "${NOMAD_IP_s3}:${NOMAD_PORT_s3}", "--quiet"]
      }

      template {
        destination = "secrets/minio.env"
        env         = true
        data        = <<-EOT
        {{ with nomadVar "nomad/jobs/harvest-storage" }}
        {{ $node := env "node.unique.name" | replaceAll "-" "_" | replaceAll "." "_" }}
        MINIO_ROOT_USER={{ index . (printf "%s_access_key" $node) }}
        MINIO_ROOT_PASSWORD={{ index . (printf "%s_secret_key" $node) }}
        {{ end }}
        MINIO_BROWSER=off
        MINIO_UPDATE=off
        {{- /* MinIO sizes its heap and its requests in flight from the memory it
           can see: the host's, not this task's cgroup. So they come from the task's
           own allocation: a heap limit of half of it (GOMEMLIMIT) and a request
           slot per 40 MiB (more wait in MinIO's queue, then get SlowDown). Under 8
           and 32 concurrent 64 MiB GETs and PUTs its peak RSS was 236-239 MiB at
           300 MiB and 261-271 MiB at 512 MiB (docs/blob.md); without them it was
           killed at 300 MiB within seconds. */}}
        {{ $mem := env "NOMAD_MEMORY_LIMIT" | parseInt }}
        MINIO_MEMLIMIT={{ divide 2 $mem }}MiB
        MINIO_API_REQUESTS_MAX={{ divide 40 $mem | maximum 2 }}
        EOT
      }

      resources {
        cpu    = 200
        memory = var.memory_mb
      }
    }
  }
}
