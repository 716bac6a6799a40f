# A harvested batch job: its tasks run on spare capacity of servers that
# belong to other services, through the harvest driver. The harvest driver
# kills a harvested task (youngest first) when the server's primary tenant
# needs its cores back; the job must then be placed again elsewhere rather
# than retried on the same busy server. Hence:
#   restart { attempts = 0 }   an evicted task is not restarted in place;
#   reschedule { ... }         its allocation is placed again, on another
#                              node (Nomad penalises the node it failed on),
#                              after a short constant delay (5 s, Nomad's
#                              minimum), a few times.
# An eviction shows as a task event "evicted: primary tenant needs N cores
# ..." and as the task's exit message, never as an ordinary failure.
variable "duration" {
  type        = string
  default     = "20"
  description = "seconds each task works"
}

job "harvest-batch" {
  type = "batch"

  meta {
    harvest = "true"
  }

  group "work" {
    count = 3

    restart {
      attempts = 0
      mode     = "fail"
    }

    reschedule {
      attempts       = 5
      interval       = "1h"
      delay          = "5s"
      delay_function = "constant"
      unlimited      = false
    }

    task "work" {
      driver = "harvest"

      config {
        command = "/bin/sh"
        args    = ["-c", "echo working on ${node.unique.name}; sleep ${var.duration}; echo done"]
      }

      kill_signal  = "SIGTERM"
      kill_timeout = "5s"

      resources {
        cpu    = 500
        memory = 64
      }
    }
  }
}
