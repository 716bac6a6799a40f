//go:build tools

// Package tools pins the OpenTofu CLI so its module graph is recorded.
package tools

import _ "github.com/opentofu/opentofu/cmd/tofu"
