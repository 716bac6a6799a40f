data "harvest_classes" "now" {}

output "constant_nodes" {
  value = flatten([for c in data.harvest_classes.now.classes : c.nodes if c.pattern == "constant"])
}
