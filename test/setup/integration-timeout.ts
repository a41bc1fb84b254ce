// `testTimeout` is a global Jest option and is ignored inside `projects`; each tier sets its own.
jest.setTimeout(120_000);
