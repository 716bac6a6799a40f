// Package plugins holds Harvest's go-plugin extension points (usage sources,
// history importers), one subpackage per plugin type. Nothing here imports a
// component's internals.
package plugins
