package main

import "strings"

// checkURL refuses a URL flag's value that cannot be what the user meant,
// saying the fix: no scheme (add http://), or a template (sent as is:
// templates are expanded in bodies and pipeline paths only).
func checkURL(command, flagName, value string) error {
	switch {
	case value == "":
		return nil
	case strings.Contains(value, "{{"):
		return usageErr("%s: %s %q: a template in the URL is sent as is, not expanded (templates work in --body, and in a pipeline's paths)", command, flagName, value)
	case !strings.Contains(value, "://"):
		return usageErr("%s: %s %q has no scheme: did you mean http://%s?", command, flagName, value, value)
	}
	return nil
}
