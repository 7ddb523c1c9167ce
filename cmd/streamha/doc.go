// Command streamha compares high-availability strategies for distributed
// stream processing. See README.md and docs/ for every subcommand.
package main
