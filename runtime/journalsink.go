package runtime

import "errors"

// JournalSink receives the lines of a journal kept elsewhere than in a
// file or in memory: a durable-execution engine's step outputs
// (package distributed keeps each line as a step of the run's workflow).
// AppendLine gets every line the journal writes, in order, one at a time
// (the journal holds its lock meanwhile), with its newline; it must have
// made the line durable when it returns, and must not keep line, which
// the journal reuses. An error fails the run (kind "journal"), as a
// failed write of a journal file does.
type JournalSink interface {
	AppendLine(line []byte) error
}

// NewSinkJournal starts the journal of a new run of program with the id
// runID (a new one when ""): its header is the first line sink gets.
func NewSinkJournal(program, runID string, sink JournalSink) (*Journal, error) {
	if sink == nil {
		return nil, errors.New("NewSinkJournal: no sink")
	}
	if runID == "" {
		runID = NewRunID()
	}
	j := &Journal{program: program, runID: runID, recs: make(map[string]*jrec), sink: sink}
	if err := j.write(j.headerLine()); err != nil {
		return nil, err
	}
	return j, nil
}

// ResumeSinkJournal reads the journal text an earlier execution of a run
// wrote to a sink (its lines, header first, in the order written) and
// returns the journal, whose later lines go to sink: a run continues it
// with JournalResume (or replays it). A last line cut short is dropped,
// as OpenJournal drops one.
func ResumeSinkJournal(text []byte, sink JournalSink) (*Journal, error) {
	if sink == nil {
		return nil, errors.New("ResumeSinkJournal: no sink")
	}
	j, _, err := parseJournal(text)
	if err != nil {
		return nil, err
	}
	j.lines, j.sink = nil, sink
	return j, nil
}

// Ended returns the status of the journal's last end line: how the last
// execution of its run ended ("" when none ended, or the journal is
// empty).
func (j *Journal) Ended() Status {
	j.mu.Lock()
	defer j.mu.Unlock()
	return Status(j.ended)
}

// Awaiting returns the step the journal's run is suspended at and has
// not been resumed with a payload yet ("" when it is not suspended, or
// its resume line is written): what a resumption of the run answers.
func (j *Journal) Awaiting() string {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.suspended == "" {
		return ""
	}
	if rec := j.recs[j.suspended]; rec != nil && rec.resumed {
		return ""
	}
	return j.suspended
}

// Usage returns the LLM usage the journal's calls reported, summed over
// its effects (what a resumed run counts against its budgets).
func (j *Journal) Usage() Usage {
	j.mu.Lock()
	defer j.mu.Unlock()
	var u Usage
	for _, s := range j.order {
		u.add(j.recs[s].usage)
	}
	return u
}
