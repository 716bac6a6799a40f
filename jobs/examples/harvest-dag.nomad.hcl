# A harvested DAG job: three stages (task groups) where each names its
# upstream stages in meta { harvest_after = "..." }. Submitted through the
# placer's admission proxy (NOMAD_ADDR=<proxy>), it gets a constraint on the
# classes Algorithm 1 picked for it, restart/reschedule settings for
# evictions, and its downstream stages start (as jobs "harvest-dag.<stage>")
# only when their upstream stages complete. `nomad job inspect harvest-dag`
# shows the choice in meta: harvest_classes, harvest_job_type,
# harvest_estimate, harvest_reason.
job "harvest-dag" {
  type = "batch"
  meta {
    harvest = "true"
  }
  group "extract" {
    count = 2
    task "t" {
      driver = "harvest"
      config {
        command = "/bin/sh"
        args    = ["-c", "echo stage ${NOMAD_GROUP_NAME}; sleep 2"]
      }
      resources {
        cpu    = 100
        memory = 32
      }
    }
  }
  group "transform" {
    count = 2
    meta {
      harvest_after = "extract"
    }
    task "t" {
      driver = "harvest"
      config {
        command = "/bin/sh"
        args    = ["-c", "echo stage ${NOMAD_GROUP_NAME}; sleep 2"]
      }
      resources {
        cpu    = 100
        memory = 32
      }
    }
  }
  group "load" {
    meta {
      harvest_after = "transform"
    }
    task "t" {
      driver = "harvest"
      config {
        command = "/bin/sh"
        args    = ["-c", "echo stage ${NOMAD_GROUP_NAME}; sleep 1"]
      }
      resources {
        cpu    = 100
        memory = 32
      }
    }
  }
}
