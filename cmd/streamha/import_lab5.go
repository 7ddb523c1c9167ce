package main

// The lab-5 student strategy ("my-strategy") registers itself.
import _ "github.com/streamha/streamha/labs/05-own-strategy/mystrategy"
