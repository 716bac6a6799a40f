resource "harvest_placer_policy" "this" {
  periodic_strength = 0.3
  max_classes       = 6
  reserve_cpu       = 0.5
  reserve_memory_mb = 512
  replicas          = 3
  diversity         = "strict"

  weights = {
    short = { unpredictable = 3, periodic = 2, constant = 1 }
    long  = { constant = 3, periodic = 2, unpredictable = 1 }
  }
}
