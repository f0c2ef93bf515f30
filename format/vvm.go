package format

func VVM(name string, src []byte) ([]byte, error) { return nil, nil }
