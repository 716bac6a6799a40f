// Package config owns the placer's configuration: the HCL file's blocks
// (Config, with the placement strategy blocks and the acl block), their
// defaults (Default), how a file or flags are laid over them (Load, Merge),
// and their checks. Decode turns a Config into Settings, the typed values
// the placer runs with, once: it parses every duration, size and threshold,
// reads plugin_config and the ACL's tokens_file, and returns every error
// the file can cause, so that nothing after it parses the config again.
package config
