export {
  ConfigError,
  type ConfigShape,
  describeConfig,
  envVar,
  type EnvVar,
  listVariables,
  loadConfig,
  type ResolvedConfig,
} from './config';
export {
  bool,
  commonVars,
  databaseVars,
  endpointIdList,
  httpUrl,
  jsonText,
  kafkaVars,
  nonNegativeInt,
  port,
  positiveInt,
  tracingVars,
  versionVar,
} from './schemas';
export { loadConfigOrExit, processEnvironment } from './boot';
export { secretValueOrFile, type SecretSource } from './secret-file';
