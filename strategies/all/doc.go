// Package all registers every strategy: importing it (for its side effect)
// gives the program the whole registry. A new strategy adds its one
// registration line here (docs/strategies.md, "Adding a strategy").
package all
