-- Each chunk's embedding size, kept beside it: the vector ranking compares
-- only vectors of the query's size, and reading the size from the vector
-- itself fetches it out of its TOAST table once more per chunk (an
-- embedding of 384 floats never fits in the row). Derived from the stored
-- array, so it is right for every chunk already written.
ALTER TABLE vector_store_chunks
    ADD COLUMN embedding_dims INTEGER GENERATED ALWAYS AS (cardinality(embedding)) STORED;
