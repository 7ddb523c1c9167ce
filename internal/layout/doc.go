// Package layout holds no code: its test states the module's architecture
// as rules on the import graph, checked from the sources (what `go list
// -deps` shows) — the drivers side by side over the runtime, the reports
// apart from the drivers, the labs' student code outside the production
// registry, and registry-wide tests that see the whole registry.
// docs/architecture.md draws the same map.
package layout
