package pipeline

import "encoding/json"

// UnmarshalJSON reads a pipeline as its JSON spells it (in a run's
// configuration handed to a child process) and checks and prepares it as
// Load does: a pipeline decoded is one a run can use.
func (p *Pipeline) UnmarshalJSON(b []byte) error {
	type plain Pipeline // without this method
	var q plain
	if err := json.Unmarshal(b, &q); err != nil {
		return err
	}
	*p = Pipeline(q)
	_, err := finish(p, p.File, nil)
	return err
}
