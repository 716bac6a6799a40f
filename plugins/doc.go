// Package plugins holds Harvest's go-plugin extension points, one
// subpackage per plugin type, and is the SDK a third party builds a plugin
// against: nothing under plugins/ imports a Harvest package outside it
// (make check-plugins, run by make lint, fails when one does).
//
//   - base: the go-plugin handshake, the plugin type names, PluginInfo and
//     the Base interface (SetConfig, PluginInfo) every type embeds.
//   - usagesource: Source.Sample(ctx), what the driver's guard loop reads
//     (capacity, host and primary-tenant CPU and memory now).
//   - historyimporter: Importer.Import(ctx, Range, tenants, emit), tenant
//     CPU series chunks and reimage events streamed over a time range.
//   - manager: the usage_source / history_importer HCL blocks, built-ins run
//     in-process and binaries from plugin_dir run over go-plugin (gRPC,
//     AutoMTLS), crash and hang supervision with restarts, metrics, and the
//     usage source that falls back to a built-in while a plugin is down.
//
// Each type has the same files: <type>.go (the interface and its types),
// plugin.go (the go-plugin GRPCPlugin), client.go and server.go (the gRPC
// sides), proto/<type>.proto with the generated code (make proto). The
// example plugins are cmd/harvest-usage-prometheus and
// cmd/harvest-import-prometheus.
package plugins
