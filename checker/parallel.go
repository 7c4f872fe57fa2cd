package checker

func (e *explorer) parallel() *Result { return e.sequential() }
