-- AlterTable
ALTER TABLE "Node" ADD COLUMN     "controlPort" INTEGER,
ADD COLUMN     "heartbeatAt" TIMESTAMP(3),
ADD COLUMN     "nomadNodeId" TEXT;

