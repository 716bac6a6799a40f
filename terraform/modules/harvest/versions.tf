terraform {
  required_version = ">= 1.5.0"

  required_providers {
    harvest = {
      source  = "harvest-platform/harvest"
      version = "~> 0.1"
    }
  }
}
