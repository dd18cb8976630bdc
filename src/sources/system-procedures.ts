/**
 * vdb's own procedures (SYSADMIN), as data: their names, parameters and how many are required.
 * engine/statements/procedures.ts runs them; SYS.Procedures and SYS.ProcedureParams list them.
 */
export interface SystemProcedure {
  name: string;
  params: string[];
  /** The first `required` parameters must be given. */
  required: number;
}

export const SYSTEM_PROCEDURES: readonly SystemProcedure[] = [
  { name: 'SYSADMIN.addUser', params: ['name', 'password'], required: 2 },
  { name: 'SYSADMIN.addExternalUser', params: ['name', 'provider'], required: 2 },
  { name: 'SYSADMIN.inviteUser', params: ['name'], required: 1 },
  { name: 'SYSADMIN.addRole', params: ['name'], required: 1 },
  { name: 'SYSADMIN.removeRole', params: ['name'], required: 1 },
  { name: 'SYSADMIN.addUserRole', params: ['roleName', 'userName'], required: 2 },
  { name: 'SYSADMIN.removeUserRole', params: ['roleName', 'userName'], required: 2 },
  { name: 'SYSADMIN.setPermissions', params: ['role', 'resourceName', 'permissions', 'condition', 'mask', 'maskOrder'], required: 2 },
  { name: 'SYSADMIN.removeUser', params: ['name'], required: 1 },
  { name: 'SYSADMIN.changeUserPwd', params: ['name', 'password'], required: 2 },
  { name: 'SYSADMIN.revokeTokens', params: ['name'], required: 1 },
  {
    name: 'SYSADMIN.createConnection',
    params: ['name', 'jbosscliTemplateName', 'connectionOrResourceAdapterProperties', 'encryptedProperties'],
    required: 2,
  },
  { name: 'SYSADMIN.createDataSource', params: ['name', 'translator', 'modelProperties', 'translatorProperties'], required: 1 },
  { name: 'SYSADMIN.alterDataSource', params: ['name', 'connectionOrResourceAdapterProperties', 'encryptedProperties'], required: 1 },
  { name: 'SYSADMIN.removeDataSource', params: ['name'], required: 1 },
  { name: 'SYSADMIN.refreshDataSource', params: ['name'], required: 1 },
  { name: 'SYSADMIN.removeConnection', params: ['name'], required: 1 },
  {
    name: 'SYSADMIN.accelerateTable',
    params: ['tableName', 'mode', 'refreshEvery', 'maxStaleness', 'changeColumn', 'keyColumns', 'fullRefreshEvery'],
    required: 1,
  },
  { name: 'SYSADMIN.refreshCopy', params: ['name', 'full'], required: 1 },
  { name: 'SYSADMIN.pauseCopy', params: ['name'], required: 1 },
  { name: 'SYSADMIN.resumeCopy', params: ['name'], required: 1 },
  { name: 'SYSADMIN.dropCopy', params: ['name'], required: 1 },
];
