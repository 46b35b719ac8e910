// `import p from "./x.proto" with { type: "file" }` yields the file's path (a $bunfs path in a compiled binary).
declare module "*.proto" {
  const path: string;
  export default path;
}
