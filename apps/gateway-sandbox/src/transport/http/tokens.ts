import { Sandbox } from '../../application/sandbox';
import { SandboxConfig } from '../../config';

export const SANDBOX = Symbol('SANDBOX');
export const SANDBOX_CONFIG = Symbol('SANDBOX_CONFIG');
export type { Sandbox, SandboxConfig };
