package main

import _ "github.com/streamha/streamha/globalcheckpoint"
