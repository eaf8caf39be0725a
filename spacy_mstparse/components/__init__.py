"""The spaCy pipeline components of spacy-mstparse."""
