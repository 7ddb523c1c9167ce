package main

// The production registry: every strategy registers itself
// (lab_strategies.go adds the labs' student strategies).
import _ "github.com/streamha/streamha/strategies/all"
