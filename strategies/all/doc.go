// Package all registers every strategy: importing it (for its side effect)
// gives the program the whole production registry. A new strategy adds its
// one registration line here (docs/strategies.md, "Adding a strategy").
// A teaching lab's student strategy is not imported here: the streamha
// command registers it beside its lab command (cmd/streamha/lab_strategies.go),
// so a student's unfinished code can break only that command's build.
package all
