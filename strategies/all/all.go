package all

import (
	_ "github.com/streamha/streamha/activestandby"
	_ "github.com/streamha/streamha/globalcheckpoint"
	_ "github.com/streamha/streamha/passivestandby"
	_ "github.com/streamha/streamha/upstreambackup"
)
