package main

// Every strategy registers itself, lab 5's student strategy (my-strategy)
// included.
import _ "github.com/streamha/streamha/strategies/all"
