import { newQuickJSWASMModuleFromVariant } from 'quickjs-emscripten-core';
const QuickJS = await newQuickJSWASMModuleFromVariant(import('@jitl/quickjs-wasmfile-release-sync'));
const rt = QuickJS.newRuntime(); rt.setMemoryLimit(32<<20);
let deadline = Date.now()+300, n=0; rt.setInterruptHandler(() => { n++; return Date.now() > deadline; });
const vm = rt.newContext();
for (const code of [process.argv[2]]) {
const t=Date.now(); deadline = Date.now()+300;
const r = vm.evalCode(code);
console.log(Date.now()-t, n, r.error ? vm.dump(r.error) : vm.dump(r.value));
}
