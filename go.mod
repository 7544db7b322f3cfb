module github.com/switchboard-hub/switchboard

go 1.26.8

require (
	github.com/google/jsonschema-go v0.4.3
	github.com/santhosh-tekuri/jsonschema/v6 v6.0.3
	golang.org/x/oauth2 v0.37.0
	golang.org/x/text v0.34.0
	golang.org/x/time v0.16.0
)
