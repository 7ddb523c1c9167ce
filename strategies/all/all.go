// Package all registers every strategy: importing it (for its side effect)
// gives the program the whole registry. A new strategy adds its one
// registration line here (docs/strategies.md, "Adding a strategy").
package all

import (
	_ "github.com/streamha/streamha/activestandby"
	_ "github.com/streamha/streamha/labs/05-own-strategy/mystrategy"
	_ "github.com/streamha/streamha/passivestandby"
	_ "github.com/streamha/streamha/upstreambackup"
)
